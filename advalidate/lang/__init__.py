"""Language front end: syntax, types, values and the reference interpreter. Imports nothing else of advalidate."""
