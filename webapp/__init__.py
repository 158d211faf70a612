"""Flask web app: upload a photo, see and correct the reading, permalinks. See ``create_app``.

``create_app(test_config)`` builds the app (blueprints: ``pages``, ``api``, ``batch``);
``serve(host, port, db)`` runs it under waitress for ``kingdomino serve``. Configuration keys:

- ``DATABASE``: SQLite file (default: ``kingdomino.sqlite3`` in the instance folder).
- ``READER``: ``callable(photo_bytes, rules, bonuses) -> dict`` (the contract's scored JSON of
  a photo, with ``corners``/``homography`` when known); tests swap in a fake one.
- ``MAX_CONTENT_LENGTH`` (bytes, default 25 MB): larger uploads are refused before any decoding.
- ``MAX_PIXELS`` (default None): the photo limits are ``vision/config.toml`` ``[io]``, the same
  for the CLI, the batch and the web app; a number here may only tighten the pixel limit.
- ``SECRET_KEY``: when not given, a random key is made once and kept in the instance folder.
- ``TRUSTED_HOSTS``: the host names the app answers to (any other ``Host`` header is a 400;
  permalinks only ever name these). ``None`` (the default of ``create_app``) answers any;
  ``serve`` sets it from ``--host``, the localhost names and ``trusted_hosts``.
- ``BATCH_*``: the batch page's limits (``webapp/batch/jobs.py``).
- ``LEARNING`` (default True): photos are read with what the store's corrections taught, and
  corrections teach (``webapp.learned``); ``kingdomino serve --no-learning`` sets it False.
  ``LEARNER``: what cuts a corrected square's example (tests swap in a fake one).
"""
from __future__ import annotations

import errno
import logging
import os
import secrets
import socket
import sys
from pathlib import Path

from flask import Flask, Response, g, jsonify, render_template, request
from flask_babel import Babel, Domain, get_locale, gettext
from werkzeug.exceptions import HTTPException

from engine.kingdom import SIZES
from kingdomino import i18n
from kingdomino.store import Store, default_store_path, private_folder

from . import security, terms
from .reading import default_reader

MAX_UPLOAD_BYTES = 25 * 1024 * 1024
MAX_PIXELS = None  # vision/config.toml [io] decides; a server may tighten it

# waitress settings of `kingdomino serve` (docs/webapp.md, "Public deployment"): a connection
# that sends nothing for channel_timeout seconds is closed (checked every cleanup_interval), so
# clients that never finish their headers cannot hold every connection for long; and there are
# enough connections that a few hundred idle ones leave room for ordinary requests (issue 48).
# Memory bound: a connection holds at most its headers (16 KB), 64 KB of body (the rest of an
# upload waits in a temporary file) and 256 KB of answer (likewise) in memory: 500 connections
# are 170 MB at the very worst, an idle one a few KB. Slow clients that keep sending a byte now
# and then are a reverse proxy's job (docs/webapp.md gives its settings).
SERVE_LIMITS = {
    "threads": 4,                        # requests handled at once (reading is one at a time)
    "connection_limit": 500,             # open connections; more wait in the listen backlog
    "backlog": 256,
    "channel_timeout": 10,               # seconds of silence before a connection is closed
    "cleanup_interval": 2,
    "max_request_header_size": 16 * 1024,
    "inbuf_overflow": 64 * 1024,         # a body beyond this is buffered on disk
    "outbuf_overflow": 256 * 1024,       # an answer beyond this is buffered on disk
    "asyncore_use_poll": True,           # select() fails past 1024 open descriptors
}
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")
WILDCARD_HOSTS = ("", "0.0.0.0", "::", "[::]")


def _secret_key(instance: Path) -> str:
    """The app's signing key, created once (readable by its owner only) and kept."""
    path = instance / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    private_folder(instance)  # it holds the key and the web batches' uploads: 0700
    key = secrets.token_hex(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key)
    return key


def get_store() -> Store:
    """The request's store connection (SQLite connections are per thread)."""
    if "store" not in g:
        from flask import current_app

        g.store = Store(current_app.config["DATABASE"])
    return g.store


def stored_jpeg(data: bytes | None, missing: str) -> Response:
    """A JPEG the store keeps (a reading's photo, a learned square's thumbnail), cached privately
    for a day; 404 saying ``missing`` when the store has none."""
    if not data:
        from flask import abort

        abort(404, description=missing)
    resp = Response(data, mimetype="image/jpeg")
    resp.headers["Cache-Control"] = "private, max-age=86400"
    return resp


def _close_store(_exc=None) -> None:
    store = g.pop("store", None)
    if store is not None:
        store.close()


def _rules_title(name: str) -> str:
    """A rule set's friendly title (as the forms show it), for the pages that name one."""
    from . import service

    return terms.rules_title(service.rules_meta(name)["title"])


def _select_locale() -> str:
    """The page's language: the one chosen on a page (cookie), else the browser's best match."""
    g.language_negotiated = True  # this answer depends on both headers (_vary_on_language)
    chosen = request.cookies.get(i18n.COOKIE)
    if chosen in i18n.available():
        return chosen
    tags = [tag for tag, _q in request.accept_languages]  # most wanted first
    return i18n.negotiate(tags)


def _vary_on_language(resp):
    """An answer in the language the request's cookie or Accept-Language picked says so, so a
    shared cache keeps one copy per language instead of giving everyone the first one's."""
    if g.get("language_negotiated"):
        resp.vary.add("Accept-Language")
        resp.vary.add("Cookie")
    return resp


class _Catalogs(Domain):
    """Flask-Babel's messages from ``webapp/translations/<locale>.po`` (``kingdomino.i18n``
    compiles them in memory, so an installed copy needs no build step)."""

    def get_translations(self):
        return i18n.translations(str(get_locale()))


def _page_language() -> dict:
    """What every page's header needs: its ``<html lang>`` and the language menu."""
    locale = str(get_locale())
    return {"page_locale": locale, "html_lang": i18n.html_lang(locale),
            "languages": [(name, i18n.html_lang(name), i18n.display_name(name))
                          for name in i18n.available()]}


def create_app(test_config: dict | None = None) -> Flask:
    """Build the web app. ``test_config`` overrides any setting (see the module doc)."""
    test_config = dict(test_config or {})
    kwargs = {}
    if test_config.get("INSTANCE_PATH"):
        kwargs["instance_path"] = str(Path(test_config["INSTANCE_PATH"]).resolve())
    app = Flask(__name__, instance_relative_config=True, **kwargs)
    app.config.update(
        DATABASE=None,
        READER=default_reader,
        LEARNING=True,
        MAX_CONTENT_LENGTH=MAX_UPLOAD_BYTES,
        MAX_PIXELS=MAX_PIXELS,
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False
    # keep key order in pages too: tie-break keys are ordered (Jinja sorts them by default)
    app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False}
    app.config.update(test_config)
    instance = Path(app.instance_path)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(instance)
    if not app.config.get("DATABASE"):
        private_folder(instance)
        app.config["DATABASE"] = str(instance / "kingdomino.sqlite3")
    Store(app.config["DATABASE"]).close()  # create the tables now: fail early on a bad path

    from . import api, outline, pages

    app.register_blueprint(pages.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(outline.bp)  # the outline given by hand
    from . import learned

    app.register_blueprint(learned.bp)  # what corrections taught: /learned
    from . import table

    app.register_blueprint(table.bp)  # whole-table photos: the game page
    try:
        from . import batch
    except ImportError:  # the batch page is optional: the rest works without it
        batch = None
    if batch is not None and getattr(batch, "bp", None) is not None:
        app.register_blueprint(batch.bp)

    babel = Babel(app, default_locale=i18n.DEFAULT, locale_selector=_select_locale)
    babel.domain_instance = _Catalogs()  # the catalogs are read from the .po files
    app.context_processor(_page_language)
    app.after_request(_vary_on_language)

    app.before_request(security.check_host)
    app.before_request(security.check_csrf)
    app.teardown_appcontext(_close_store)
    app.jinja_env.globals["csrf_token"] = security.csrf_token
    app.jinja_env.globals["has_batch"] = "batch" in app.blueprints
    app.jinja_env.globals["rules_title"] = _rules_title
    app.jinja_env.globals["terrain_name"] = terms.terrain_name
    app.jinja_env.globals["bonus_title"] = terms.bonus_title
    app.jinja_env.globals["pieces_note"] = terms.pieces_note
    app.jinja_env.filters["bonus_title"] = terms.bonus_title
    app.jinja_env.filters["say"] = terms.say  # the reader's and engine's sentences
    app.jinja_env.filters["status_text"] = terms.status_text
    app.jinja_env.globals["tiebreak_text"] = terms.tiebreak_text
    app.jinja_env.globals["page_names"] = terms.page_names
    app.jinja_env.globals["score_texts"] = lambda score: terms.engine_texts(
        terms.score_texts(score), score.get("rules") if isinstance(score, dict) else None)
    app.jinja_env.globals["title_of"] = terms.rules_title
    app.jinja_env.globals["kingdom_sizes"] = SIZES   # the size choices: engine.kingdom's

    @app.after_request
    def _headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; "
            "script-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'")
        return resp

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        if not security.host_trusted():  # no page, no link: nothing may name that host
            if request.path.startswith("/api/"):
                return jsonify(error=security.UNTRUSTED_HOST), 400
            return Response(security.UNTRUSTED_HOST + "\n", status=400, mimetype="text/plain")
        message = exc.description or exc.name
        if exc.code == 413:
            limit = app.config["MAX_CONTENT_LENGTH"] // (1024 * 1024)
            message = f"the upload is too large: at most {limit} MB; send a smaller photo"
        if request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json":
            return jsonify(error=message), exc.code  # API errors stay English (machines read them)
        detail = None
        if exc.code == 413:
            message = gettext("The upload is too large: at most %(limit)s MB; send a smaller "
                              "photo.", limit=limit)
        else:
            message, detail = terms.error_text(exc.code, message)
        return render_template("error.html", code=exc.code, name=gettext(exc.name),
                               message=message, detail=detail), exc.code

    @app.errorhandler(Exception)
    def _server_error(exc: Exception):  # a bug of ours: log it, answer without a traceback
        app.logger.exception("unexpected error on %s", request.path)
        message = "something went wrong on the server; the error was logged"
        if request.path.startswith("/api/"):
            return jsonify(error=message), 500
        return render_template("error.html", code=500, name=gettext("Server error"),
                               message=gettext(terms.ERROR_TEXTS[500])), 500

    return app


def _own_addresses() -> list[str]:
    """This machine's names and addresses (for a server listening on every interface)."""
    names = {socket.gethostname(), socket.getfqdn()}
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            names.add(info[4][0])
    except OSError:
        pass
    try:  # the address other machines reach us at (no packet is sent)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            names.add(probe.getsockname()[0])
    except OSError:
        pass
    return sorted(n for n in names if n)


def trusted_hosts_for(host: str, extra=()) -> list[str]:
    """The host names ``serve`` answers to: ``host`` (or, for 0.0.0.0, this machine's names and
    addresses), the localhost names, ``extra`` and ``$KINGDOMINO_TRUSTED_HOSTS`` (commas)."""
    names = list(LOCAL_HOSTS)
    names += _own_addresses() if host in WILDCARD_HOSTS else [host]
    names += list(extra or ())
    names += os.environ.get("KINGDOMINO_TRUSTED_HOSTS", "").split(",")
    out = []
    for name in names:
        name = name.strip().lower()
        if name and name not in out:
            out.append(name)
    return out


def serve(host: str = "127.0.0.1", port: int = 5000, db: str | None = None,
          trusted_hosts=(), learning: bool = True) -> int:
    """Run the app under waitress (a production WSGI server), debug off. Returns an exit code.

    Only requests whose ``Host`` is ``host``, a localhost name or one of ``trusted_hosts`` are
    answered; connection limits and timeouts are ``SERVE_LIMITS``. ``learning`` False
    (``--no-learning``): photos are read without what corrections taught, and corrections
    teach nothing (``webapp.learned``).
    """
    import waitress

    database = os.path.abspath(db or default_store_path())
    private_folder(os.path.dirname(database))  # before web/ is made in it: 0700, as the batch
    # the secret key and the web batches' uploads live beside the store (private to its user),
    # not in whatever folder the command was started from
    config = {"DEBUG": False, "DATABASE": database,
              "INSTANCE_PATH": os.path.join(os.path.dirname(database), "web")}
    config["TRUSTED_HOSTS"] = trusted_hosts_for(host, trusted_hosts)
    config["LEARNING"] = bool(learning)
    app = create_app(config)
    logging.basicConfig()  # waitress's own lines (as waitress.serve sets up)
    quiet_queue_warnings()
    try:
        # the port is bound here, before "serving on" is said: a port in use is one clear line.
        # waitress buffers a body before the app sees it: cut off a body just over the app's
        # own limit (which answers 413 as JSON) so absurd uploads stop early
        server = waitress.create_server(
            app, host=host, port=port, **SERVE_LIMITS,
            max_request_body_size=app.config["MAX_CONTENT_LENGTH"] + 2**20)
    except OSError as exc:
        print(f"kingdomino: error: cannot listen on {host}:{port}: {_listen_problem(exc, port)}",
              file=sys.stderr, flush=True)
        return 1
    print(f"kingdomino: serving on http://{host}:{port}/  (store: {app.config['DATABASE']}; "
          f"answers to: {', '.join(app.config['TRUSTED_HOSTS'])}; "
          f"{'learning from corrections' if learning else 'learning off'}; Ctrl+C stops)",
          flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        return 0
    finally:
        server.close()
    return 0


def _listen_problem(exc: OSError, port: int) -> str:
    """Why the port could not be bound, and what to do, in one sentence."""
    if exc.errno == errno.EADDRINUSE:
        return (f"the port is in use (another server, or an earlier kingdomino serve still "
                f"running): stop it, or choose another port with --port {port + 1}")
    if exc.errno == errno.EACCES:
        return "not allowed (ports below 1024 need more rights): choose a port such as 5000"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return "this machine has no such address: give --host 127.0.0.1, or one of its own"
    return str(exc.strerror or exc)


class _RealBacklog(logging.Filter):
    """Lets waitress's "Task queue depth is N" through only for a real backlog: with one user,
    a page asks for its script, styles and photo at once while a reading holds a thread, and
    a depth of 1 or 2 is the normal course of things, not a warning."""

    def filter(self, record: logging.LogRecord) -> bool:
        depth = record.args[0] if isinstance(record.args, tuple) and record.args else None
        return not isinstance(depth, int) or depth >= QUEUE_WARN_DEPTH


# the queued requests (beyond the threads at work) from which waitress's warning is shown
QUEUE_WARN_DEPTH = 2 * SERVE_LIMITS["threads"]


def quiet_queue_warnings() -> None:
    """Keep waitress's queue warning for a real backlog (``_RealBacklog``); idempotent."""
    queue = logging.getLogger("waitress.queue")
    if not any(isinstance(f, _RealBacklog) for f in queue.filters):
        queue.addFilter(_RealBacklog())
