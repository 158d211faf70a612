"""Reading the squares of a found kingdom: the crops (``crops``), the square classifier
(``classify``) with what it can read (``labels``), the 48 dominoes' prior and the board's decoding
(``dominoes``, ``tiling``), squares under glare (``glare``), holes that show the table (``holes``)
and the squares a person should check (``review``)."""
