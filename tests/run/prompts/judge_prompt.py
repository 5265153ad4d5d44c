"""An llm-judge prompt script: the code-judge payload on stdin, the judge prompt on stdout."""

import json
import sys

payload = json.load(sys.stdin)
rubric = (payload.get("config") or {}).get("rubric", "be correct")
print(f"PROMPT-SCRIPT question={payload['question']} answer={payload['answer']} rubric={rubric}")
