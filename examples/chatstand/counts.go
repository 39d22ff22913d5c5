package chatstand

import "maps"

// accountCounts measures the real rule per account: one generation at a
// time per account, across every browser signed in as it (sessions are
// keyed by user name, so two logins of one user are one account). Guarded
// by the server's mu.
type accountCounts struct {
	max      map[string]int // account -> most generation requests in flight at once
	maxTotal int            // most in flight at once over all accounts
	gens     map[string]int // account -> generations started
}

// admitted records a request of user just counted in active.
func (c *accountCounts) admitted(user string, active map[string]int) {
	if c.max == nil {
		c.max, c.gens = map[string]int{}, map[string]int{}
	}
	c.max[user] = max(c.max[user], active[user])
	total := 0
	for _, n := range active {
		total += n
	}
	c.maxTotal = max(c.maxTotal, total)
}

func (c *accountCounts) generated(user string) {
	if c.gens == nil {
		c.max, c.gens = map[string]int{}, map[string]int{}
	}
	c.gens[user]++
}

// MaxPerAccount is, per account (user), the most generation requests it
// had in flight at once, refused ones included.
func (s *Server) MaxPerAccount() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.perAccount.max)
}

// MaxTotal is the most generation requests in flight at once over all
// accounts, refused ones included.
func (s *Server) MaxTotal() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perAccount.maxTotal
}

// GenerationsBy is how many generations account started.
func (s *Server) GenerationsBy(account string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perAccount.gens[account]
}
