"""Python AST -> IR: one visitor per construct, names resolved against numba.cuda, errors at file:line:col."""
