package fork

// keySeparator parts a caller's request ID from what boxsnap adds to it
// for the operations one call makes (a fork into many's forks, a fork of
// the box now's take): a control character, which no request ID an agent
// sends may hold (the API refuses it), so no key of its own reads as one
// of them and answers another call's operation.
const keySeparator = "\x1f"
