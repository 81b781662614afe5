package api

import "fmt"

// The API's own words: a retry key used again, and how to poll an
// operation. The words of what a route or a tool read or did are
// app/api/answers'.

// requestReusedWords refuse a tool call whose retry key (its request) an
// earlier call of another tool, or of the same tool with other arguments,
// already made.
func requestReusedWords(request, tool string, sameTool bool) string {
	if sameTool {
		tool += " with other arguments"
	}
	return fmt.Sprintf("The request ID %s was used for another call (%s): make a new request ID for this one.", request, tool)
}

// pollWords says how to poll a long operation, or a request for the
// person's word, by its ID.
func pollWords(id string) string {
	return fmt.Sprintf("Poll it with box_operation (operation %s, and wait: seconds to wait for its end, at most %d), or GET /api/v1/operations/%s?wait=true.", id, MaxPollWait, id)
}

// pollWaitWords refuses a wait out of bounds.
func pollWaitWords(most int) string {
	return fmt.Sprintf("wait is a number of seconds from 0 to %d.", most)
}
