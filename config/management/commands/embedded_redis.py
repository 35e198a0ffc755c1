from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.embedded import ensure_embedded_redis, stop_embedded_redis


class Command(BaseCommand):
    help = "Start, show or stop the embedded Redis server used when REDIS_URL is unset."

    def add_arguments(self, parser):
        parser.add_argument("--stop", action="store_true", help="save and stop it")

    def handle(self, *args, stop: bool, **options):
        if settings.REDIS_URL:
            raise CommandError(
                f"REDIS_URL is set ({settings.REDIS_URL}): nothing embedded."
            )
        directory = settings.REDIS_EMBEDDED_DIR
        if stop:
            if stop_embedded_redis(directory):
                self.stdout.write(
                    f"Stopped the embedded Redis; its data stays in {directory}."
                )
            else:
                self.stdout.write("No embedded Redis was running.")
            return
        url = ensure_embedded_redis(directory)
        self.stdout.write(f"Embedded Redis at {url}; data in {directory}.")
