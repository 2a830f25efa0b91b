"""Running nodes over Erlang distribution: connect, probe, measure."""
