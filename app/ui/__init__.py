"""The web console's static assets (`static/`), served at `/ui` by app.api.ui."""
