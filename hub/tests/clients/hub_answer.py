"""What both Python A2A test clients (a2a_hub_client.py on a2a-sdk 1.3,
a2a03_hub_client.py on 0.3) read off the hub's raw answer, whatever their
SDK line keeps of it: the last response's status and JSON body (an httpx
response hook), and the first google.rpc.ErrorInfo of an error's details.
No SDK import here: each client's venv has its own SDK line.
"""

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


class NoAnswer(Exception):
    """The agent gave no A2A answer (exit 3)."""


class Capture:
    """httpx hooks: keep the status and body of the last request's response."""

    def __init__(self):
        self.status = None
        self.body = None

    async def reset(self, request):
        self.status = self.body = None

    async def __call__(self, response):
        await response.aread()
        self.status = response.status_code
        try:
            self.body = response.json()
        except ValueError:
            self.body = None


def error_info(details):
    """The first google.rpc.ErrorInfo in a list of details, or {}."""
    for d in details if isinstance(details, list) else []:
        if isinstance(d, dict) and d.get("@type") == ERROR_INFO:
            return d
    return {}
