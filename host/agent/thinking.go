package agent

// sendable is the history as it goes to the server: thinking is kept only
// on the assistant messages since the latest question, which are tool-call
// turns of the question being answered. That is where the APIs ask for it:
// OpenAI's gpt-oss guide says to pass the reasoning of the current
// tool-calling turns back (Ollama's gpt-oss template renders it, and
// llama.cpp's server reads reasoning_content), and DeepSeek's thinking
// mode needs it while it is calling tools; earlier questions' thinking is
// dropped, as the qwen3, deepseek-r1 and gpt-oss templates drop it
// themselves. The history (and the transcript) keep all of it.
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
