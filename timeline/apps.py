from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "timeline"

    def ready(self) -> None:
        from config.redis import on_first_connect
        from timeline.upgrades import layout_check

        # Every process refuses a store of another key layout before its first use.
        on_first_connect(layout_check)
