module pipeplan

go 1.26
