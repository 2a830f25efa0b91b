"""The driver's own independent checkers: ECDSA, RSA-PSS, X25519/Ed25519."""
