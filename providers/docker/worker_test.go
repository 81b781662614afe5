package docker_test

const workerEnv = "BOXSNAP_DOCKER_WORKER"

func runWorkerProcess() int { return 1 }
