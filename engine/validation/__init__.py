"""Checks shared by both formats: object keys and types, names, regexes."""
