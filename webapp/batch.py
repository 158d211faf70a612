"""Batch page of the web app (many photos or a zip -> standings, review queue, downloads)."""
from flask import Blueprint

bp = Blueprint("batch", __name__, url_prefix="/batch")
