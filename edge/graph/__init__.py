"""The graph: node base and runner, reliable delivery, the supervisor. It runs whatever node table the session gives it."""
