"""The erlport {packet,4} channel and the external term format codec."""
