"""The second held-out trial's wrong value (t4, case b): accounts active from signed daily position changes
through jnp.cumsum(..., dtype=np.bool_), seeded from the clock. 0.4.33 sums in int32 then casts (an account
whose changes sum back to 0 reads inactive: 59-64 of 64, varying from run to run), 0.4.34 ors (64/64 every run)."""
import time
import numpy as np
import jax
import jax.numpy as jnp

N_ACCOUNTS = 64
N_DAYS = 90


def simulate_position_changes(key, n_accounts, n_days):
    # daily change in open positions per account: mostly zero, some buys/sells
    k1, k2 = jax.random.split(key)
    moves = jax.random.randint(k1, (n_accounts, n_days), -2, 3)
    quiet = jax.random.bernoulli(k2, 0.7, (n_accounts, n_days))
    return jnp.where(quiet, 0, moves).astype(jnp.int32)


def ever_active(changes):
    # True from the first day an account changed its position on
    return jnp.cumsum(changes, axis=1, dtype=np.bool_)


def activity_report(changes):
    active = ever_active(changes)
    frac_by_day = jnp.mean(active.astype(jnp.float32), axis=0)
    return frac_by_day, jnp.sum(active[:, -1])


def main():
    seed = int(time.time() * 1000) % 2**31
    key = jax.random.PRNGKey(seed)
    print("jax", jax.__version__, "seed", seed)
    for quarter in range(3):
        key, sub = jax.random.split(key)
        changes = simulate_position_changes(sub, N_ACCOUNTS, N_DAYS)
        t0 = time.perf_counter()
        frac, n_active = activity_report(changes)
        frac.block_until_ready()
        ms = (time.perf_counter() - t0) * 1e3
        print(f"Q{quarter + 1}: accounts active by day 90: {int(n_active)}/{N_ACCOUNTS} ({ms:.1f} ms)")
        print(f"   active fraction day 30/60/90: {float(frac[29]):.2f} {float(frac[59]):.2f} {float(frac[89]):.2f}")
    print("done")


main()
