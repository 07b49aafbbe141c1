package agent

// sendable is the history as it goes to the server: thinking is kept only
// on the assistant messages since the latest question, which are the
// tool-call turns of the question being answered. That is where the APIs
// ask for it: Ollama's tool-calling guide returns the thinking with the
// tool results in the follow-up request, OpenAI's gpt-oss guide passes the
// reasoning of the current tool-calling turns back, and llama.cpp's server
// reads reasoning_content for templates that use it. Earlier questions'
// thinking is dropped, as the qwen3, deepseek-r1 and gpt-oss templates
// drop it themselves. The history (and the transcript) keep all of it.
func sendable(history []Message) []Message {
	lastUser := -1
	for i, m := range history {
		if m.Role == "user" {
			lastUser = i
		}
	}
	out := make([]Message, len(history))
	copy(out, history)
	for i := range out {
		if i < lastUser || out[i].Role != "assistant" || len(out[i].ToolCalls) == 0 {
			out[i].Thinking = ""
		}
	}
	return out
}
