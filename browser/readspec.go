package browser

import "github.com/spoolgate/spoolgate/spool/config"

// readSpecOf is how the site's answer is read: its keys done, copy,
// errorTurn, chrome, network and read.
func readSpecOf(site config.SiteConfig) readSpec {
	rs := readSpec{}
	rs.methods = orderMethods(nil, rs.network != nil, rs.copy != "")
	return rs
}
