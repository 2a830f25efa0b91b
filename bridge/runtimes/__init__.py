"""The runtimes bridge measures: Erlang nodes, Python workers, openssl."""
