"""A dependency that announces itself on stdout when imported (outside the server's tree)."""

print("noisylib 2.1: telemetry enabled")

ZERO = 0
