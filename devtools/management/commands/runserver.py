import redis
from django.conf import settings
from django.contrib.staticfiles.management.commands.runserver import (
    Command as StaticRunserver,
)
from django.core.management.base import CommandError

from config.redis import get_redis
from timeline import fanout
from timeline.upgrades import StoreOutdated, data_keys


class Command(StaticRunserver):
    """runserver that starts the embedded Redis up front, runs a fan-out worker
    thread and offers demo data.

    With REDIS_URL unset the first request would start the embedded server anyway;
    doing it here puts the "data lives in ..." line at the top of the log.
    """

    def inner_run(self, *args, **options):
        try:
            keys = data_keys(get_redis())
        except StoreOutdated as error:
            raise CommandError(str(error)) from error
        except redis.RedisError as error:
            self.stderr.write(f"Redis is not answering ({error}); pages will show 503.")
        else:
            if keys == 0:
                self.stdout.write(
                    "The store is empty. For demo data (1,000 users who all log in "
                    "with the password 'retwis-demo-password'), run in another "
                    "terminal:\n"
                    "    .venv/bin/python manage.py seed\n"
                )
        if settings.RUNSERVER_FANOUT_WORKER:
            # Posts reach followers' homes through the jobs a worker runs; the
            # development server brings one, so a newcomer gets the complete site.
            fanout.start_thread()
            self.stdout.write(
                "A fan-out worker runs in this process "
                "(RUNSERVER_FANOUT_WORKER=false to run `manage.py fanout_worker` "
                "yourself)."
            )
        super().inner_run(*args, **options)
