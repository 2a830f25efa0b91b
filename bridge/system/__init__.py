"""The machine and its installations: processes, OTP discovery, libcrypto, topology."""
