"""How the benchmark programs hand over their JSON reports: to a file, or to stdout."""
import json


def write_report(report: dict, path: str = None) -> None:
    """Writes `report` (indented JSON) to `path`, or prints it when no path is given."""
    text = json.dumps(report, indent=1)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
