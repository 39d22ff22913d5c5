package report

// turnsTogether lists a conversation's turns together: each follow-up
// right after the task whose chat it continues (its turns in the order
// they were submitted), every other row where it was. A follow-up whose
// parent is not among rows stays in its place.
func turnsTogether(rows []Row) []Row {
	at := map[string]int{}
	for i, r := range rows {
		if _, ok := at[r.TaskID]; !ok {
			at[r.TaskID] = i
		}
	}
	next := map[int][]int{} // a row's follow-ups, in order
	child := make([]bool, len(rows))
	for i, r := range rows {
		if r.FollowUp == "" {
			continue
		}
		if p, ok := at[r.FollowUp]; ok && p != i {
			next[p] = append(next[p], i)
			child[i] = true
		}
	}
	if len(next) == 0 {
		return rows
	}
	out := make([]Row, 0, len(rows))
	seen := make([]bool, len(rows))
	var emit func(i int)
	emit = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		out = append(out, rows[i])
		for _, c := range next[i] {
			emit(c)
		}
	}
	for i := range rows {
		if !child[i] {
			emit(i)
		}
	}
	for i := range rows {
		emit(i) // a follow-up cycle no parent leads into: in place
	}
	return out
}
