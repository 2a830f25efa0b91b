"""bridge: is my crypto fast, and is it using the hardware?

Times Erlang `crypto`, Python `hashlib`/`hmac` and the `openssl` CLI on
byte-identical inputs, checks they compute the same bytes, and reports the
numbers with their spread.
"""

__version__ = "0.1.0"
