"""Shared by omp-wait.py and omp-idle.py: the share of a database's time under main."""


def main_share(db, cputime):
    """cputime under main / all cputime after start-up (the time before the runtime
    started, charged to the loader's entry of thread 0, left aside)."""
    root = db.execute("select incl_sum from value where scope = 0 and metric = ?",
                      (cputime,)).fetchone()[0]
    main = db.execute("select coalesce(sum(v.incl_sum), 0) from value v join scope_names s "
                      "on s.id = v.scope where s.procedure = 'main' and "
                      "s.kind = 'procedure' and v.metric = ?", (cputime,)).fetchone()[0]
    startup = db.execute("select coalesce(sum(v.incl_sum), 0) from value v join scope_names s "
                         "on s.id = v.scope where s.parent = 0 and s.procedure like '[ld-linux%' "
                         "and v.metric = ?", (cputime,)).fetchone()[0]
    return main / (root - startup)
