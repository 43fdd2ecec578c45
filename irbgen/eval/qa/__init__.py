"""QA evaluation: reader methods, answer scoring, a ReAct agent, an LLM judge and the resumable run.

    from irbgen.eval.qa.run import QAOptions, run_qa
    summary = run_qa("bench/", "eval/rag", QAOptions("rag", LLMSettings(model="gpt-4.1-mini"), k=4))

Modules: `scoring` (pure answer-set, containment, abstention and false-premise measures), `methods`
(closed-book, in-context, rag, cot, cot-rag, react, hop-ablation: prompts in, final answer out),
`ablation` (which documents each hop ablation shows, needs_every_hop and its share), `react` (the agent
loop and its tools), `judge` (correct / incorrect / not_attempted verdicts) and `run` (the output
directory: config.json, predictions.jsonl, per_query.jsonl, metrics.json, ledger.json).
"""
