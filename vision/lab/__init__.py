"""The reader's laboratory: generated photos and measurements used to build and judge the reader
(never imported by the reader itself)."""
