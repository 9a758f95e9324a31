import time, jax, jax.numpy as jnp, sys, os
t=time.time(); d=jax.devices(); print("devices", d, jax.__version__, "open", time.time()-t, flush=True)
print("stats", d[0].memory_stats(), flush=True)
for n, dt, b in [(20,"float32",2**31//(20*20*4)+65),(128,"float32",2**31//(128*128*4)+65),(128,"complex64",2**31//(128*128*8)+65),(128,"complex64",2**29//(128*128)+65),(256,"complex64",2**29//(256*256)+65)]:
    for name, f in (("slogdet", jnp.linalg.slogdet), ("det", jnp.linalg.det)):
        t=time.time()
        try:
            c=jax.jit(f).lower(jax.ShapeDtypeStruct((b,n,n), dt)).compile()
            m=c.memory_analysis()
            print(n, dt, b, name, "compile %.1fs"%(time.time()-t), "temp %.2f arg %.2f out %.2f GiB"%(m.temp_size_in_bytes/2**30, m.argument_size_in_bytes/2**30, m.output_size_in_bytes/2**30), flush=True)
        except Exception as e:
            print(n, dt, b, name, "ERR", type(e).__name__, str(e)[:300], flush=True)
x = jnp.ones((4,8,8), jnp.complex64) + jnp.eye(8)
print(jnp.linalg.slogdet(x), jnp.linalg.det(x))
print(sys.version, os.cpu_count(), "PYTHONPATH", os.environ.get("PYTHONPATH"), flush=True)
for m in ("packaging","filelock","tomli","scipy","numpy"):
    try: __import__(m); print(m, "ok")
    except Exception as e: print(m, "missing", e)
