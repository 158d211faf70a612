"""Flask web app: upload a photo, see and correct the reading, permalinks. See ``create_app``."""
