from django.urls import path

from timeline import views

app_name = "timeline"
urlpatterns = [
    # The pages people read most come first: Django tries the routes in order
    # (about half a microsecond each), and none of these overlaps another.
    path("", views.home, name="home"),
    path("timeline/", views.global_timeline, name="global_timeline"),
    path("u/<str:username>/", views.profile, name="profile"),
    path("s/<int:sid>/", views.status_detail, name="status_detail"),
    path("notifications/", views.notifications_page, name="notifications"),
    path("tags/<str:tag>/", views.tag, name="tag"),
    path("u/<str:username>/followers/", views.followers, name="followers"),
    path("u/<str:username>/following/", views.following, name="following"),
    path("post/", views.post_status, name="post_status"),
    path("s/<int:sid>/delete/", views.status_delete, name="status_delete"),
    path("s/<int:sid>/reply/", views.status_reply, name="status_reply"),
    path("s/<int:sid>/edit/", views.status_edit, name="status_edit"),
    path("s/<int:sid>/history/", views.status_history, name="status_history"),
    path("s/<int:sid>/like/", views.like, name="like"),
    path("s/<int:sid>/unlike/", views.unlike, name="unlike"),
    path("s/<int:sid>/bookmark/", views.bookmark, name="bookmark"),
    path("s/<int:sid>/unbookmark/", views.unbookmark, name="unbookmark"),
    path("bookmarks/", views.bookmarks_page, name="bookmarks"),
    path("scheduled/", views.scheduled_page, name="scheduled"),
    path("scheduled/<int:n>/cancel/", views.scheduled_cancel, name="scheduled_cancel"),
    path("s/<int:sid>/mute/", views.mute_conversation, name="mute_conversation"),
    path("s/<int:sid>/unmute/", views.unmute_conversation, name="unmute_conversation"),
    path("s/<int:sid>/pin/", views.pin, name="pin"),
    path("s/<int:sid>/unpin/", views.unpin, name="unpin"),
    path("s/<int:sid>/repost/", views.repost, name="repost"),
    path("s/<int:sid>/unrepost/", views.unrepost, name="unrepost"),
    path("s/<int:sid>/likes/", views.status_likes, name="status_likes"),
    path("s/<int:sid>/reposts/", views.status_reposts, name="status_reposts"),
    path("search/", views.search, name="search"),
    path("people/suggested/", views.suggested, name="suggested"),
    path("search/people.json", views.search_json, name="search_json"),
    path("u/<str:username>/follow/", views.follow, name="follow"),
    path("u/<str:username>/unfollow/", views.unfollow, name="unfollow"),
    path(
        "u/<str:username>/request/cancel/",
        views.request_cancel,
        name="request_cancel",
    ),
    path("u/<str:username>/block/", views.block, name="block"),
    path("u/<str:username>/unblock/", views.unblock, name="unblock"),
    path("u/<str:username>/mute/", views.mute, name="mute"),
    path("u/<str:username>/unmute/", views.unmute, name="unmute"),
    path("notifications/read/", views.notifications_read, name="notifications_read"),
    path("settings/blocked/", views.blocked_and_muted, name="blocked_and_muted"),
    path("settings/requests/", views.follow_requests, name="follow_requests"),
    path(
        "settings/requests/<str:username>/approve/",
        views.request_approve,
        name="request_approve",
    ),
    path(
        "settings/requests/<str:username>/deny/",
        views.request_deny,
        name="request_deny",
    ),
]
