"""gunicorn settings for the benchmark: each worker says when it can serve.

gunicorn's master listens before its workers have loaded the site, so an open port
says nothing about readiness: requests wait in the backlog while workers import
Django, and a short wrk run then measures the boot. `post_worker_init` runs in each
worker once the WSGI application is loaded, just before it accepts requests; it
leaves a file named by the worker's pid in $BENCH_READY_DIR, which the master
removes when that worker exits (a respawned worker must report again).
"""

import os
from pathlib import Path


def post_worker_init(worker):
    Path(os.environ["BENCH_READY_DIR"], str(worker.pid)).touch()


def child_exit(server, worker):
    Path(os.environ["BENCH_READY_DIR"], str(worker.pid)).unlink(missing_ok=True)
