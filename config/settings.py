"""Django settings. Every value comes from the environment through django-environ.

`.env.example` lists each variable with its development default. Redis is the only
datastore: there is no database, no ORM app and no Django session table.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env.str(
    "SECRET_KEY",
    default="dev-only-insecure-key-change-me-8f2c1b7e9a4d4c0f9e1d2a3b4c5d6e7f",
)
if not DEBUG and SECRET_KEY.startswith("dev-only-"):
    raise ImproperlyConfigured(
        "Set SECRET_KEY: the development key is refused when DEBUG is off."
    )
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# --- Redis -------------------------------------------------------------------------
# Empty: the site starts (or reuses) an embedded redis-server whose data lives in
# REDIS_EMBEDDED_DIR. Set it to a real server in production, e.g. redis://host:6379/0.
REDIS_URL = env.str("REDIS_URL", default="")
REDIS_EMBEDDED_DIR = env.path("REDIS_EMBEDDED_DIR", default=BASE_DIR / "var")
REDIS_SOCKET_TIMEOUT = env.float("REDIS_SOCKET_TIMEOUT", default=5.0)
# true: REDIS_URL names any node of a Redis Cluster. Only `config.redis` reads it: the
# key layout and the code paths are the same on one server and on a cluster.
REDIS_CLUSTER = env.bool("REDIS_CLUSTER", default=False)
if REDIS_CLUSTER and not REDIS_URL:
    raise ImproperlyConfigured(
        "REDIS_CLUSTER=true needs REDIS_URL to name a node of the cluster, e.g. "
        "redis://10.0.0.1:6379/0 (the embedded Redis is a single server)."
    )
# Replicas that must confirm a write (Redis WAIT) before the site acknowledges it;
# 0 (the default) waits for none. With replicas, 1 means a failover loses no
# acknowledged post: replication is asynchronous otherwise.
REDIS_WAIT_REPLICAS = env.int("REDIS_WAIT_REPLICAS", default=0)
REDIS_WAIT_TIMEOUT_MS = env.int("REDIS_WAIT_TIMEOUT_MS", default=1000)

# --- Accounts ----------------------------------------------------------------------
AUTH_COOKIE_NAME = env.str("AUTH_COOKIE_NAME", default="retwis_auth")
AUTH_TOKEN_TTL_DAYS = env.int("AUTH_TOKEN_TTL_DAYS", default=30)
AUTH_MAX_DEVICES = env.int("AUTH_MAX_DEVICES", default=20)
# API access tokens one user may hold (apps they authorized); the oldest past it stop
# working when another is issued.
AUTH_MAX_APP_TOKENS = env.int("AUTH_MAX_APP_TOKENS", default=100)

# --- Abuse limits (accounts/limits.py) ---------------------------------------------
# Each is a list of rates "N/period" (units s, m, h, d): N at once, then one every
# period/N; "off" for none. Refused requests answer 429 with Retry-After.
# Statuses per user (Mastodon's default allows 300 in 3 hours).
RATE_LIMIT_POST = env.str("RATE_LIMIT_POST", default="30/5m,300/3h")
# Follows and unfollows per user (Twitter allows 400 follows a day).
RATE_LIMIT_FOLLOW = env.str("RATE_LIMIT_FOLLOW", default="30/1m,400/1d")
# Likes, reposts and their undoing per user (timeline.social).
RATE_LIMIT_LIKE = env.str("RATE_LIMIT_LIKE", default="60/1m,1000/1d")
# Reports one user may file (`timeline.reports`): the site's and the API's.
RATE_LIMIT_REPORT = env.str("RATE_LIMIT_REPORT", default="10/1h")
# API requests per access token (Mastodon's default: 300 in 5 minutes), and per
# client address for requests without one; every API response says what is left
# (X-RateLimit-* headers).
RATE_LIMIT_API = env.str("RATE_LIMIT_API", default="300/5m")
# Apps registered (POST /api/v1/apps) per client address.
RATE_LIMIT_APPS = env.str("RATE_LIMIT_APPS", default="10/5m,100/1d")
# Sign-ups per client address (each costs a password hash, ~100 ms of CPU).
RATE_LIMIT_SIGNUP = env.str("RATE_LIMIT_SIGNUP", default="5/10m,20/1d")
# Failed logins (and password confirmations) per name-and-client pair, so a stranger
# cannot lock the owner out, and per client, whatever the names tried.
RATE_LIMIT_LOGIN_PAIR = env.str("RATE_LIMIT_LOGIN_PAIR", default="10/5m")
RATE_LIMIT_LOGIN_CLIENT = env.str("RATE_LIMIT_LOGIN_CLIENT", default="30/5m,300/1d")
# The client address: REMOTE_ADDR, unless the site runs behind proxies that set a
# header; then name it (e.g. X-Forwarded-For, or X-Real-IP) and how many proxies of
# yours append to it, so the address the first of them saw is the one counted (an
# address a client wrote into the header itself is never taken).
TRUSTED_PROXY_HEADER = env.str("TRUSTED_PROXY_HEADER", default="")
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=1)
LOGIN_URL = "accounts:login"
# A deleted account's name can be claimed again only after this many days.
ACCOUNT_NAME_GRACE_DAYS = env.int("ACCOUNT_NAME_GRACE_DAYS", default=30)

# --- Timelines ---------------------------------------------------------------------
TIMELINE_PAGE_SIZE = env.int("TIMELINE_PAGE_SIZE", default=30)
HOME_TIMELINE_CAP = env.int("HOME_TIMELINE_CAP", default=1000)
# A repost is left out of a home that holds its original at most this many entries
# below it: the status shows once, where it first came (Mastodon's REBLOG_FALLOFF);
# an older status reposted shows again, at the top (`timeline.selectors`).
HOME_REPOST_FALLOFF = env.int("HOME_REPOST_FALLOFF", default=40)
GLOBAL_TIMELINE_CAP = env.int("GLOBAL_TIMELINE_CAP", default=1000)
# Statuses kept per hashtag's timeline (`/tags/<tag>/`), the newest.
TAG_TIMELINE_CAP = env.int("TAG_TIMELINE_CAP", default=1000)
# Tags one user may follow (`timeline.tagfollows`): each is one more timeline merged
# into every page of their home.
FOLLOWED_TAGS_MAX = env.int("FOLLOWED_TAGS_MAX", default=100)
# The global page's trending tags count the statuses of this many last hours.
TRENDS_HOURS = env.int("TRENDS_HOURS", default=6)
# How often fan-out workers add those hours up for every page (`timeline.trends`):
# the trending tags shown are up to about 1.25 times this old (2 times while the
# workers are stopped or busy). 0: no worker does; every global page adds them up
# itself, at a cost that grows with the tags the site uses.
TRENDS_REFRESH_SECONDS = env.float("TRENDS_REFRESH_SECONDS", default=60.0)
# How often one fan-out worker adds every slot's counts up for `/api/v1/instance`
# (`timeline.counts`): the user and status counts shown are up to about 1.25 times
# this old. 0: no worker does; the instance shows the last sum (seed, upgrade or
# `timelines repair` write one too).
SITE_COUNTS_SECONDS = env.float("SITE_COUNTS_SECONDS", default=60.0)
# Notification groups kept per user (`timeline.notifications`), oldest dropped.
NOTIFICATIONS_CAP = env.int("NOTIFICATIONS_CAP", default=500)
# Suggestions a user dismissed ("who to follow", `timeline.suggestions`), kept per
# user; past it the oldest dismissal goes (that person may be suggested again).
SUGGESTION_DISMISSALS_MAX = env.int("SUGGESTION_DISMISSALS_MAX", default=1000)
# Reports (`timeline.reports`): open ones waiting for an operator (past it, a new
# report is refused with a message), settled ones kept (past it, the oldest settled
# go), and statuses one report may flag.
REPORTS_OPEN_MAX = env.int("REPORTS_OPEN_MAX", default=10_000)
REPORTS_SETTLED_MAX = env.int("REPORTS_SETTLED_MAX", default=10_000)
REPORT_STATUSES_MAX = env.int("REPORT_STATUSES_MAX", default=20)
FOLLOW_BACKFILL = env.int("FOLLOW_BACKFILL", default=200)
# A profile names the people in common among the viewer's newest follows, up to this
# many, so its cost does not grow with how many people the viewer follows.
PROFILE_IN_COMMON_SCAN = env.int("PROFILE_IN_COMMON_SCAN", default=500)
# Followers per fan-out step (its cursor is recorded after each). On a Cluster a
# script call carries the readers of one slot, so a step of 1,000 followers spread
# over 16,384 slots is a call per reader; 50,000 puts about three in each call and
# doubled the rate (docs/BENCHMARKS.md). On one server, 1,000: 5,000 raised the rate
# (1.15-1.33x) but in `bench/fanout.py` posts under load waited longer (POST p99 152
# against 96 ms with back-to-back posters): pages first.
FANOUT_BATCH = env.int("FANOUT_BATCH", default=50_000 if REDIS_CLUSTER else 1000)
# On one server, followers per step while the steps are slowed (the machine busy,
# FANOUT_REDIS_SHARE below): a page's command waits behind a shorter script.
FANOUT_BATCH_SLOWED = env.int("FANOUT_BATCH_SLOWED", default=250)
# While the machine a fan-out worker runs on has no CPU to spare, the share of the
# worker's time that a job's steps keep Redis at work (after a step that took t, it
# waits t * (1 - share) / share); with CPU to spare, steps run back to back. Where
# Redis shares its cores with the web servers, a 100,000-follower push back to back
# took a core from pages offered half of what they serve (home p99 13 -> 455 ms in
# `bench/fanout.py`); docs/BENCHMARKS.md has the measured choice. 1: never wait, the
# default on a Cluster, whose masters the README deploys on machines of their own: on
# one machine its three masters kept the 2 cores busy by themselves, so the steps
# were slowed even with no pages (100,000 followers: 35k inserts/s against 106k).
FANOUT_REDIS_SHARE = env.float(
    "FANOUT_REDIS_SHARE", default=1.0 if REDIS_CLUSTER else 0.25
)
# Readers per fan-out script call where the readers are passed (on Redis Cluster,
# those of one hash slot at most); one server's post job writes a step's homes in one
# call that reads the followers itself (`timeline.fanout._FOLLOWERS_PUSH`).
FANOUT_GROUP = env.int("FANOUT_GROUP", default=250)
# Fan-out skips readers not seen for this long; their home is rebuilt when they return.
FANOUT_ACTIVE_DAYS = env.int("FANOUT_ACTIVE_DAYS", default=30)
# Authors with more followers than this are not pushed to homes: a home merges their
# newest statuses at read time (docs/BENCHMARKS.md has the measured crossover).
FANOUT_PUSH_MAX = env.int("FANOUT_PUSH_MAX", default=100_000)
STATUS_MAX_LENGTH = 280

# The streaming API (`api.streaming`): open streams a process serves at most (each
# holds a web-server thread; past it, 503); the heartbeat's interval, which also
# refreshes the reader's presence key, whose TTL outlives a few missed beats; how
# far back a read on a signal looks for statuses whose fan-out ran late; and how
# many statuses (or notification groups) such a read takes.
STREAMS_MAX = env.int("STREAMS_MAX", default=200)
STREAM_HEARTBEAT_SECONDS = env.float("STREAM_HEARTBEAT_SECONDS", default=15.0)
STREAM_PRESENCE_SECONDS = env.int("STREAM_PRESENCE_SECONDS", default=90)
STREAM_CATCH_UP_SECONDS = env.int("STREAM_CATCH_UP_SECONDS", default=120)
if STREAM_PRESENCE_SECONDS <= 2 * STREAM_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "STREAM_PRESENCE_SECONDS must outlast two heartbeats "
        "(STREAM_HEARTBEAT_SECONDS): the presence key would expire while a stream "
        "is open, and its home and notifications would not reach it."
    )
STREAM_READ_SIZE = 20
# Where clients stream from (`urls.streaming_api` of the instance): empty, the site's
# own address; else another origin (`wss://...` or `https://...`) serving
# /api/v1/streaming/ (the README's deploy section).
STREAMING_API_BASE = env.str("STREAMING_API_BASE", default="")

# --- Jobs (timeline/jobs.py, timeline/fanout.py) -------------------------------------
# A worker holds a job this long before another may resume it from its cursor.
JOB_LEASE_SECONDS = env.int("JOB_LEASE_SECONDS", default=60)
JOB_MAX_ATTEMPTS = env.int("JOB_MAX_ATTEMPTS", default=8)
JOB_RETRY_MAX_SECONDS = env.int("JOB_RETRY_MAX_SECONDS", default=300)
JOB_FAILED_CAP = env.int("JOB_FAILED_CAP", default=1000)
# How often each worker reads every queue for due jobs whose wake-up call was lost.
JOB_SWEEP_SECONDS = env.float("JOB_SWEEP_SECONDS", default=5.0)
# A follow or unfollow (a block, a privacy change, a like or unlike) records its job
# this long ahead: the request finishes the work itself and cancels the job; only a
# request that died midway leaves it to run.
JOB_FOLLOW_GRACE_SECONDS = env.int("JOB_FOLLOW_GRACE_SECONDS", default=10)
# runserver starts a fan-out worker thread of its own (set to false when you run
# `manage.py fanout_worker` beside it).
RUNSERVER_FANOUT_WORKER = env.bool("RUNSERVER_FANOUT_WORKER", default=True)

# --- Django ------------------------------------------------------------------------
INSTALLED_APPS = [
    # First, so that its runserver (embedded Redis, demo-data hint) wins over
    # staticfiles' own.
    "devtools",
    "config",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
    "timeline",
    "api",
]

MIDDLEWARE = [
    # First: every response gets its headers, whichever layer answered.
    "config.middleware.SecurityHeadersMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads a form (the CSRF check does).
    "config.middleware.FormCharsetMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.RedisUnavailableMiddleware",
    "accounts.middleware.AuthenticationMiddleware",
    "timeline.middleware.LastSeenMiddleware",
    "timeline.middleware.NotificationsCountMiddleware",
    "timeline.middleware.FiltersMiddleware",
]

# Requests under this path are the client API (`api/`): bearer tokens, JSON, no
# cookie and no CSRF.
API_PATH_PREFIX = "/api/"

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": False,
        "OPTIONS": {
            "environment": "config.jinja2.environment",
            "context_processors": [
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.viewer",
                "timeline.context_processors.notifications",
                "config.context_processors.assets",
                "config.context_processors.csrf",
            ],
        },
    },
]
# Template functions the apps give every template (see config/jinja2.py).
JINJA2_GLOBALS = {
    "status_list": "timeline.rendering.status_list_tag",
    "conversation_list": "timeline.rendering.conversation_list_tag",
    "person_rows": "timeline.rendering_people.person_rows_tag",
    "profile_card": "timeline.rendering_people.profile_card_tag",
    "notification_list": "timeline.rendering.notification_list",
    "version_list": "timeline.rendering.version_list",
    "poll_options_max": "timeline.domain.POLL_OPTIONS_MAX",
    "poll_option_max_chars": "timeline.domain.POLL_OPTION_MAX_CHARS",
    "poll_durations": "timeline.forms.POLL_DURATIONS",
}

# No database: every user, status, follow edge and token lives in Redis.
DATABASES: dict = {}

MESSAGE_STORAGE = "django.contrib.messages.storage.cookie.CookieStorage"

PASSWORD_HASHERS = env.list(
    "PASSWORD_HASHERS",
    default=[
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    ],
)
AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation."
        "UserAttributeSimilarityValidator",
        "OPTIONS": {"user_attributes": ("username",)},
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STORAGES = {
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        ),
    },
}

# --- Security ----------------------------------------------------------------------
# Secure cookies and HTTPS redirects follow DEBUG unless set explicitly (a load test
# over plain loopback HTTP turns SECURE_SSL_REDIRECT off).
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
AUTH_COOKIE_SECURE = env.bool("AUTH_COOKIE_SECURE", default=not DEBUG)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 3600)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG
)
# Browsers' preload lists require a year at least, and a preloaded site stays HTTPS-only
# for good: the default trial hour is never preloaded.
SECURE_HSTS_PRELOAD = env.bool(
    "SECURE_HSTS_PRELOAD", default=SECURE_HSTS_SECONDS >= 365 * 86400
)
if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Scripts, styles and images from this site only, no inline script or style (the
# templates have none; tests/config/test_headers.py and the browser tests check), no
# plugins, no framing, forms post here only. Django 5.2 has no CSP setting of its own.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Browser features no page of the site uses, refused to it and to anything it embeds.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "autoplay",
        "camera",
        "display-capture",
        "fullscreen",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "publickey-credentials-get",
        "screen-wake-lock",
        "serial",
        "usb",
        "xr-spatial-tracking",
    )
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        # Unhandled exceptions (500s) with their tracebacks; Django's own console
        # handler prints only with DEBUG on, and there are no ADMINS to mail.
        "django.request": {
            "handlers": ["console"],
            "level": "ERROR",
            "propagate": False,
        },
        "config": {"handlers": ["console"], "level": "INFO"},
        "accounts": {"handlers": ["console"], "level": "INFO"},
        "timeline": {"handlers": ["console"], "level": "INFO"},
    },
}

CSRF_FAILURE_VIEW = "config.views.csrf_failure"
