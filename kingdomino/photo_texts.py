"""Why a photo was refused, as templates of the catalogs, so the pages and the CLI say it in the
reader's language (issue 52).

The reader (``vision``) and the services raise and store these sentences in English, as the API's
JSON, the CSV and the logs keep them; they are translated only where a person reads them (the
upload form, the result and batch pages, the CLI's error lines) by ``kingdomino.i18n.render``,
which matches an English sentence back to its template here. Each template is the exact English
of its sentence with the values as ``%(name)s``; ``tests/test_i18n_coverage.py`` makes the
reader's own errors and holds each against these, so a reworded sentence is caught there.
"""
from __future__ import annotations

from engine.messages import N_

# vision.errors
NO_KINGDOM = N_("no kingdom found in the photo: take the photo from above with the whole kingdom "
                "in view, on a plain table, in good light")
TOO_SMALL = N_("the image is too small to hold a kingdom")

# vision.photo.files: the file and its header (``SUPPORTED`` is written out: one sentence)
EMPTY = N_("the image file is empty (0 bytes): send the photo again")
HEIC = N_("HEIC/AVIF photos are not supported: save the photo as JPEG (on an iPhone: Settings > "
          "Camera > Formats > Most Compatible)")
NOT_IMAGE = N_("not an image file: send a photo as JPEG, PNG, WebP or BMP")
HEADER_DAMAGED = N_("the %(format)s file is cut short or damaged (its header cannot be read): "
                    "send the photo again")
FILE_TOO_LARGE = N_("the image file is too large: %(mb)s MB, the limit is %(limit)s MB: send a "
                    "smaller photo")
NO_PIXELS = N_("the %(format)s file is damaged: its header says it has no pixels; send the photo "
               "again")
TOO_MANY_PIXELS = N_("the image is too large: %(size)s pixels, more than the %(limit)s megapixels "
                     "a photo may have: send a smaller photo")
TOO_LARGE_TO_DECODE = N_("the image is too large to decode: %(size)s pixels of %(channels)s "
                         "%(bits)s-bit channels take %(mb)s MB, more than the %(limit)s MB "
                         "allowed: send an 8-bit JPEG or a smaller photo")
TRUNCATED = N_("the %(format)s file is cut short (truncated) or damaged: send the photo again")
UNDECODABLE = N_("the %(format)s file is damaged and cannot be decoded: send the photo again")
NOT_REENCODED = N_("the photo cannot be re-encoded as JPEG: send it as a JPEG")
BUSY = N_("too many photos are being read at once: try again in a minute")

# vision.photo.files: what a path is when it is not a photo file
FOLDER = N_("%(name)s is a folder, not a photo: name the photo files in it (kingdomino batch "
            "reads whole folders)")
FIFO = N_("%(name)s is a named pipe (FIFO), not a photo file: save the photo to a file and give "
          "that")
SOCKET = N_("%(name)s is a socket, not a photo file: give a photo file")
DEVICE = N_("%(name)s is a device, not a photo file: give a photo file")
LINK_LOOP = N_("%(name)s is a symbolic link loop (it leads back to itself), not a photo: point it "
               "at the photo file")
BROKEN_LINK = N_("%(name)s is a broken symbolic link (what it points to does not exist): check "
                 "the path")
NO_SUCH_FILE = N_("no such photo file: %(name)s; check the path")
UNREADABLE = N_("%(name)s cannot be read: %(why)s")
UNREADABLE_CHECK = N_("%(name)s cannot be read: %(why)s; check the path and who may read it")

# kingdomino.service.failure_message
NOT_READ = N_("the photo could not be read")
NO_MEMORY = N_("there was not enough memory to read this photo: send a smaller photo")
FILE_UNREADABLE = N_("the photo file cannot be read: %(why)s")
READER_FAILED = N_("the reader failed on this photo (an internal error, %(kind)s): please report "
                   "it with the photo (%(details)s)")
DETAILS_VERBOSE = N_("run again with --verbose to see the details")
DETAILS_LOG = N_("the details are in the log")

# webapp.service and webapp.security: an upload refused or not read
UPLOAD_EMPTY = N_("the uploaded file is empty: choose a photo of the kingdom")
UPLOAD_UNREADABLE = N_("the image cannot be read: %(why)s")
UPLOAD_TOO_LARGE = N_("the image is too large to decode: send a smaller photo")
UPLOAD_UNDECODABLE = N_("the image cannot be decoded: it is damaged or in a form this server does "
                        "not read; send it again as a JPEG or PNG")
UPLOAD_NO_KINGDOM = N_("no kingdom could be read in this photo")
UPLOAD_READER_FAILED = N_("this photo could not be read: the reader failed on it (the fault was "
                          "logged); try another photo, taken from above in even light")
LARGE_PHOTOS_BUSY = N_("too many large photos are being read at once: try again in a minute")

# kingdomino.batch: a file of a batch that is not read, and why
BATCH_NOT_PHOTO = N_("not a photo: the file is not a JPEG, PNG, WebP or BMP image")
BATCH_EMPTY = N_("the file is empty")
BATCH_TOO_LARGE = N_("the photo is larger than the %(limit)s MB a photo may be; export it smaller")
BATCH_ZIPPED_TOO_LARGE = N_("the photo is %(mb)s MB, more than the %(limit)s MB a photo may be; "
                            "export it smaller")
BATCH_BAD_ZIP = N_("not a readable zip file (%(why)s)")
BATCH_ZIP_FILES = N_("the zip holds %(n)s files, more than the %(most)s one batch reads from a "
                     "zip; split it into smaller zips")
BATCH_ZIP_DATA = N_("the zip holds more data than one batch reads from a zip (%(gb)s GB); split it")
BATCH_ZIP_UNREADABLE = N_("cannot read this file from the zip: %(why)s")
BATCH_ZIP_DAMAGED = N_("this file is damaged in the zip (%(why)s)")
BATCH_NO_KINGDOM = N_("no kingdom found in this photo: take it from above with every kingdom "
                      "whole in view")
BATCH_READER_FAILED = N_("the reader failed on this photo because of a fault in the program, not "
                         "in the photo (%(kind)s); the other photos are read; run with --verbose "
                         "for the details and report it")
BATCH_STOPPED_FIRST = N_("not read (the batch was stopped)")
BATCH_STOPPED = N_("the batch stopped: %(why)s")
BATCH_NO_SUCH = N_("no such file or folder: %(name)s")
