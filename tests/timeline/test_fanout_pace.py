"""How a fan-out worker paces its steps on a machine it shares (`timeline.fanout`):
full speed while the machine has CPU to spare, FANOUT_REDIS_SHARE of its time while
it has none, judged with what the steps themselves would take at full speed."""

from __future__ import annotations

import pytest

from tests.helpers import make_user, run_jobs
from timeline import fanout, keys


class Machine:
    """A /proc/stat of 2 cores whose idle share the test sets for each window."""

    def __init__(self):
        self.now = 100.0
        self.idle = 0
        self.total = 0

    def run(self, seconds: float, idle_cores: float) -> None:
        ticks = round(seconds * 100) * 2  # 10 ms ticks, 2 cores
        self.idle += round(ticks * idle_cores / 2)
        self.total += ticks
        self.now += seconds

    def ticks(self) -> list[int]:
        busy = self.total - self.idle
        return [busy, 0, 0, self.idle, 0, 0, 0, 0]


def pace(machine: Machine) -> fanout._Pace:
    paced = fanout._Pace(ticks=machine.ticks, clock=lambda: machine.now, cores=2)
    paced.slowed(0.0)  # the first reading: nothing to compare with yet
    return paced


def window(paced, machine, *, idle_cores: float, steps_took: float) -> bool:
    """One 100 ms window in which the steps kept Redis busy `steps_took` s."""
    machine.run(0.1, idle_cores)
    return paced.slowed(steps_took)


def test_a_fanout_alone_on_the_machine_goes_at_full_speed():
    machine = Machine()
    paced = pace(machine)
    # Redis at work on the steps nearly all the time, a core and a bit idle.
    assert window(paced, machine, idle_cores=0.8, steps_took=0.09) is False
    assert window(paced, machine, idle_cores=0.8, steps_took=0.09) is False


def test_a_fanout_slows_down_when_pages_leave_no_cpu_to_spare():
    machine = Machine()
    paced = pace(machine)
    assert window(paced, machine, idle_cores=0.8, steps_took=0.09) is False
    # Pages came: the machine is busy while the steps run at full speed.
    assert window(paced, machine, idle_cores=0.1, steps_took=0.09) is True


def test_slowed_it_does_not_speed_up_on_the_cpu_it_leaves_idle(settings):
    settings.FANOUT_REDIS_SHARE = 0.25
    machine = Machine()
    paced = pace(machine)
    assert window(paced, machine, idle_cores=0.1, steps_took=0.09) is True
    # Slowed to a quarter, the steps leave 0.7 cores idle; at full speed they would
    # take about 0.75 of a core more: it stays slowed.
    assert window(paced, machine, idle_cores=0.7, steps_took=0.025) is True
    # The pages went: with 1.6 cores idle, full speed still leaves some.
    assert window(paced, machine, idle_cores=1.6, steps_took=0.025) is False


def test_a_job_starting_on_a_busy_machine_starts_slowed():
    machine = Machine()
    paced = pace(machine)
    # No step in the window, the pages leave 0.9 cores idle: a full-speed job
    # would take one of them.
    assert window(paced, machine, idle_cores=0.9, steps_took=0.0) is True


def test_without_a_proc_stat_steps_go_at_full_speed():
    paced = fanout._Pace(ticks=lambda: None, clock=lambda: 0.0, cores=2)
    assert paced.slowed(0.01) is False


@pytest.mark.parametrize(
    ("share", "slowed", "wait"),
    [(0.25, True, 0.03), (0.5, True, 0.01), (0.25, False, None), (1.0, True, None)],
)
def test_a_slowed_step_is_followed_by_its_share_of_waiting(
    settings, monkeypatch, share, slowed, wait
):
    settings.FANOUT_REDIS_SHARE = share
    monkeypatch.setattr(fanout._pace, "slowed", lambda took: slowed)
    waits: list[float] = []
    monkeypatch.setattr(fanout.time, "sleep", waits.append)
    fanout._leave_redis(0.01)
    assert waits == ([] if wait is None else [pytest.approx(wait)])


@pytest.mark.single_server
@pytest.mark.parametrize(
    ("batch", "slow", "steps"),
    [(40, True, 10), (40, False, 3), (8, True, 12), ("alternate", None, 4)],
)
def test_a_slowed_job_writes_its_homes_in_smaller_steps(
    r, settings, monkeypatch, batch, slow, steps
):
    # Redis runs a step's script whole before any page's command waiting behind
    # it: while the machine is busy (the steps slowed) a step carries
    # FANOUT_BATCH_SLOWED followers, so a page waits behind a shorter one; with
    # CPU to spare, FANOUT_BATCH; never more than FANOUT_BATCH. Either way, and
    # when the machine turns busy and idle again between steps, every home gets
    # the status once.
    from tests.timeline.test_fanout_crashes import add_followers, homes_holding
    from timeline import services

    settings.FANOUT_BATCH = 40 if batch == "alternate" else batch
    settings.FANOUT_BATCH_SLOWED = 10
    settings.FANOUT_REDIS_SHARE = 0.25
    author = make_user("author")
    readers = add_followers(author.id, 95)
    run_jobs()
    if batch == "alternate":  # 10 slowed, 40, 10 slowed, the last 35

        def slowed(took: float) -> bool:
            fanout._pace.slow = not fanout._pace.slow
            return fanout._pace.slow

        monkeypatch.setattr(fanout._pace, "slowed", slowed)
        monkeypatch.setattr(fanout._pace, "slow", True)
    else:
        monkeypatch.setattr(fanout._pace, "slowed", lambda took: slow)
        monkeypatch.setattr(fanout._pace, "slow", slow)
    monkeypatch.setattr(fanout.time, "sleep", lambda seconds: None)
    taken: list[float] = []
    leave = fanout._leave_redis
    monkeypatch.setattr(
        fanout, "_leave_redis", lambda took: taken.append(took) or leave(took)
    )
    status = services.status_create(author=author, text="to 95 homes")
    run_jobs()
    assert len(taken) == steps
    assert homes_holding(status.id, readers) == 95
    assert all(r.zrange(keys.home(uid), 0, -1) == [str(status.id)] for uid in readers)
