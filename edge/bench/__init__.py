"""Benchmarks (`venus-edge bench ...`) and the suites they generate; the runtime never imports this package."""
