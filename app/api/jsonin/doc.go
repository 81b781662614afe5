// Package jsonin reads an API request's JSON body strictly: one object, no
// unknown field, no NUL, within the API's cap, and says what is wrong in
// words that name what the endpoint takes; its middleware refuses a body
// that is not JSON and a path or query that is not text. It holds no state
// and knows nothing of the core: app/api answers its refusals with their
// codes.
//
// It must never import a package of boxsnap.
package jsonin
