"""The machine a run happened on: CPU model, cores, kernel, load."""
import os
import platform


def describe_machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory_gb = None
    try:
        with open("/proc/meminfo") as f:
            memory_gb = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": model, "cores": os.cpu_count(), "kernel": platform.release(), "memory_gb": memory_gb,
            "python": platform.python_version()}


def load_average():
    return [round(x, 2) for x in os.getloadavg()]
