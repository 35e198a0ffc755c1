"""The client API's handlers, one module per part of Mastodon's API."""
