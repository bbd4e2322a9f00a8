"""How the benchmark programs hand over their JSON reports: to a file, or to stdout."""
import json
import os


def write_report(report: dict, path: str = None) -> None:
    """Writes `report` (indented JSON) to `path` atomically (a reader never sees half of it, also
    when the writer is killed), or prints it when no path is given."""
    text = json.dumps(report, indent=1)
    if path:
        with open(path + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(path + ".tmp", path)
    else:
        print(text)
