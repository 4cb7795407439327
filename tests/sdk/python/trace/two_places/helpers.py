"""A helper that prints the same text as the server's start-up line."""


def warm():
    print("warming caches")
