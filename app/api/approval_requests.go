package api

// approvalRequests are the handlers of the requests for the person's word:
// listed, read, approved and declined. They hold the server, in a type of
// their own so the server's type does not grow.
type approvalRequests struct{ *server }
