// Command spoolgate is a filesystem spool daemon that runs AI
// content-generation tasks on two lanes: web models in a real browser, one
// at a time, and API models in a pool. Its code is doors/cli.
package main

import (
	"os"

	"github.com/spoolgate/spoolgate/doors/cli"
)

func main() { os.Exit(cli.Main()) }
