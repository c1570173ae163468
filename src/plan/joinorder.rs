//! Join order search: which FROM items to join first, as PostgreSQL's
//! `standard_join_search` (joinrels.c) and, beyond `geqo_threshold`, its
//! genetic search (here a greedy one).
//!
//! The search sees only an abstract [`Problem`]: each item's estimated rows
//! (after its own filters), the conditions that join two or more items
//! ([`Clause`]) and the equivalence classes of columns that WHERE equalities
//! make equal ([`Class`], PostgreSQL's `EquivalenceClass`: `a1 = b5 AND
//! b5 = c3` puts `a1, b5, c3` in one class, so any two of them may be a join
//! key). It returns a [`Tree`]; the binder builds the plan from it.
//!
//! - The join graph links two items when a clause or a class reads both.
//!   Each connected component is searched alone: by dynamic programming over
//!   its connected subsets (every split of a subset into two joined, linked
//!   parts; PostgreSQL's level-by-level `join_search_one_level` builds the
//!   same set of join relations) while it has fewer items than
//!   `geqo_threshold` (and never more than [`DP_MAX`]), greedily above: the
//!   pair of linked relations whose join has the fewest estimated rows is
//!   joined first, until one relation is left.
//! - A cross product is made only between components, after every join,
//!   the smallest component first; the larger input of each is its left
//!   (outer) one, since the nested loop keeps its right input in memory.
//! - The size of a set of items is a function of the set alone: the product
//!   of the items' rows, the clauses inside it and, for each class with `m`
//!   items inside it, `1 / n_distinct` of all its members there but the one
//!   with the fewest distinct values (each join on the class keeps
//!   `1 / max(nd1, nd2)`, as PostgreSQL's `eqjoinsel`; none when the class
//!   holds a constant: its members are filtered to it already).
//! - A join costs its inputs' costs plus, for a hash join (a class or an
//!   equality links the two sides), both inputs' rows and its output's rows;
//!   for a nested loop, the product of the inputs' rows.
//!
//! Invariant: the tree holds every item exactly once; the left input of each
//! join within a component is the side holding the lower-numbered item, so
//! a search that keeps FROM order reproduces the left-deep plan of FROM
//! order.

/// A set of items, one bit each.
pub type Set = u128;

/// The most items a search takes (the width of [`Set`]); the binder joins a
/// longer FROM list in FROM order.
pub const MAX_ITEMS: usize = 128;

/// The largest component searched by dynamic programming whatever the
/// settings say (`geqo = off` or a high `geqo_threshold`): its work grows
/// as 3^n.
pub const DP_MAX: usize = 14;

/// A condition over two or more items.
#[derive(Debug, Clone)]
pub struct Clause {
    /// The items it reads.
    pub items: Set,
    /// The fraction of rows it keeps.
    pub sel: f64,
    /// An equality whose sides may become hash keys.
    pub hashable: bool,
}

/// Columns equal to each other (and maybe to a constant).
#[derive(Debug, Clone)]
pub struct Class {
    /// `(item, n_distinct)` of its members, at most one per item.
    pub members: Vec<(usize, f64)>,
    /// One member is equal to a constant.
    pub constant: bool,
}

/// What the search knows of a FROM list.
#[derive(Debug, Clone, Default)]
pub struct Problem {
    /// Estimated rows of each item after its own filters.
    pub rows: Vec<f64>,
    /// Conditions over two or more items.
    pub clauses: Vec<Clause>,
    /// Equivalence classes over two or more items.
    pub classes: Vec<Class>,
}

/// A join order.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// One FROM item, by position.
    Leaf(usize),
    /// A join of two subtrees (left, right).
    Join(Box<Tree>, Box<Tree>),
}

impl Tree {
    /// The items under this tree, in its left-to-right order.
    pub fn leaves(&self, out: &mut Vec<usize>) {
        match self {
            Tree::Leaf(i) => out.push(*i),
            Tree::Join(l, r) => {
                l.leaves(out);
                r.leaves(out);
            }
        }
    }

    /// The set of items under this tree.
    pub fn set(&self) -> Set {
        match self {
            Tree::Leaf(i) => bit(*i),
            Tree::Join(l, r) => l.set() | r.set(),
        }
    }
}

/// How to search (the settings `geqo` and `geqo_threshold`).
#[derive(Debug, Clone, Copy)]
pub struct Strategy {
    /// `geqo`: components of `threshold` items or more are searched greedily.
    pub geqo: bool,
    /// `geqo_threshold`.
    pub threshold: usize,
}

impl Strategy {
    /// Whether a component of `n` items is searched by dynamic programming.
    pub fn exhaustive(&self, n: usize) -> bool {
        n <= DP_MAX && (!self.geqo || n < self.threshold)
    }
}

fn bit(i: usize) -> Set {
    1 << i
}

fn items_of(s: Set) -> impl Iterator<Item = usize> {
    (0..MAX_ITEMS).filter(move |&i| s & bit(i) != 0)
}

/// A joined relation the search has built.
#[derive(Debug, Clone)]
struct Rel {
    set: Set,
    rows: f64,
    cost: f64,
    tree: Tree,
}

impl Problem {
    /// Estimated rows of the join of the items in `s`.
    pub fn rows_of(&self, s: Set) -> f64 {
        let mut rows: f64 = items_of(s).map(|i| self.rows[i]).product();
        for c in &self.clauses {
            if c.items & s == c.items {
                rows *= c.sel;
            }
        }
        for class in &self.classes {
            if class.constant {
                continue;
            }
            // Divided by the m - 1 largest n_distinct of the members
            // inside s: all of them but the smallest.
            let (mut m, mut product, mut least) = (0, 1.0, f64::INFINITY);
            for (i, nd) in &class.members {
                if s & bit(*i) != 0 {
                    let nd = nd.max(1.0);
                    m += 1;
                    product *= nd;
                    least = least.min(nd);
                }
            }
            if m >= 2 {
                rows /= product / least;
            }
        }
        rows.max(1.0)
    }

    /// For each item, the items a clause or a class links it to.
    fn adjacency(&self) -> Vec<Set> {
        let mut adj = vec![0; self.rows.len()];
        let mut link = |s: Set| {
            for i in items_of(s) {
                adj[i] |= s & !bit(i);
            }
        };
        for c in &self.clauses {
            link(c.items);
        }
        for class in &self.classes {
            link(class.members.iter().fold(0, |s, (i, _)| s | bit(*i)));
        }
        adj
    }

    /// Whether joining `l` and `r` can be a hash join.
    fn hashable(&self, l: Set, r: Set) -> bool {
        let both = |s: Set| s & l != 0 && s & r != 0;
        self.classes
            .iter()
            .any(|c| both(c.members.iter().fold(0, |s, (i, _)| s | bit(*i))))
            || self
                .clauses
                .iter()
                .any(|c| c.hashable && c.items & (l | r) == c.items && both(c.items))
    }

    fn leaf(&self, i: usize) -> Rel {
        Rel {
            set: bit(i),
            rows: self.rows[i],
            cost: self.rows[i],
            tree: Tree::Leaf(i),
        }
    }

    /// The rows and cost of joining `l` and `r`.
    fn estimate(&self, l: &Rel, r: &Rel) -> (f64, f64) {
        let rows = self.rows_of(l.set | r.set);
        let work = if self.hashable(l.set, r.set) {
            l.rows + r.rows
        } else {
            l.rows * r.rows
        };
        (rows, l.cost + r.cost + work + rows)
    }

    /// The join of `a` and `b`, the lower-numbered item's side left.
    fn join(&self, a: &Rel, b: &Rel) -> Rel {
        let (l, r) = if a.set.trailing_zeros() < b.set.trailing_zeros() {
            (a, b)
        } else {
            (b, a)
        };
        let (rows, cost) = self.estimate(l, r);
        Rel {
            set: l.set | r.set,
            rows,
            cost,
            tree: Tree::Join(Box::new(l.tree.clone()), Box::new(r.tree.clone())),
        }
    }
}

/// The join order for `p`.
pub fn search(p: &Problem, how: Strategy) -> Tree {
    let n = p.rows.len();
    assert!(
        (1..=MAX_ITEMS).contains(&n),
        "a search of 1 to {MAX_ITEMS} items"
    );
    let adj = p.adjacency();
    let mut comps: Vec<Rel> = Vec::new();
    let mut seen: Set = 0;
    for start in 0..n {
        if seen & bit(start) != 0 {
            continue;
        }
        // The component of `start`, by a flood over the join graph.
        let mut comp = bit(start);
        let mut frontier = bit(start);
        while frontier != 0 {
            let next = items_of(frontier).fold(0, |s, i| s | adj[i]) & !comp;
            comp |= next;
            frontier = next;
        }
        seen |= comp;
        let items: Vec<usize> = items_of(comp).collect();
        comps.push(if how.exhaustive(items.len()) {
            dynamic(p, &adj, &items)
        } else {
            greedy(p, &adj, &items)
        });
    }
    // Cross products between components, smallest first.
    comps.sort_by(|a, b| a.rows.total_cmp(&b.rows));
    let mut it = comps.into_iter();
    let first = it.next().expect("at least one component");
    it.fold(first, |acc, c| {
        let rows = acc.rows * c.rows;
        // The nested loop keeps its right input: the smaller.
        let (l, r) = if acc.rows < c.rows {
            (c, acc)
        } else {
            (acc, c)
        };
        Rel {
            set: l.set | r.set,
            rows,
            cost: l.cost + r.cost + rows,
            tree: Tree::Join(Box::new(l.tree), Box::new(r.tree)),
        }
    })
    .tree
}

/// Dynamic programming over the connected subsets of one component.
fn dynamic(p: &Problem, adj: &[Set], items: &[usize]) -> Rel {
    let m = items.len();
    if m == 1 {
        return p.leaf(items[0]);
    }
    let size = 1usize << m;
    // Per local subset: the items as a global set, and their neighbours.
    let mut global: Vec<Set> = vec![0; size];
    let mut near: Vec<Set> = vec![0; size];
    for mask in 1..size {
        let low = mask.trailing_zeros() as usize;
        global[mask] = global[mask & (mask - 1)] | bit(items[low]);
        near[mask] = near[mask & (mask - 1)] | adj[items[low]];
    }
    let mut best: Vec<Option<Rel>> = vec![None; size];
    for (k, &i) in items.iter().enumerate() {
        best[1 << k] = Some(p.leaf(i));
    }
    for mask in 1..size {
        if mask.count_ones() < 2 {
            continue;
        }
        let low = mask & mask.wrapping_neg();
        let rest = mask ^ low;
        // Every split (left holding the lowest item), each once.
        let mut sub = rest;
        loop {
            let left = low | sub;
            let right = mask ^ left;
            if right != 0 && near[left] & global[right] != 0 {
                if let (Some(a), Some(b)) = (&best[left], &best[right]) {
                    let (_, cost) = p.estimate(a, b);
                    // Only a winner's tree is built.
                    if best[mask].as_ref().map_or(true, |c| cost < c.cost) {
                        best[mask] = Some(p.join(a, b));
                    }
                }
            }
            if sub == 0 {
                break;
            }
            sub = (sub - 1) & rest;
        }
    }
    best[size - 1]
        .take()
        .expect("a connected component has a join order")
}

/// Greedy search over one component: the linked pair with the smallest
/// join first (then the cheaper, then the lower-numbered).
fn greedy(p: &Problem, adj: &[Set], items: &[usize]) -> Rel {
    let mut rels: Vec<(Rel, Set)> = items.iter().map(|&i| (p.leaf(i), adj[i])).collect();
    while rels.len() > 1 {
        // (a, b, rows, cost) of the best pair so far.
        let mut pick: Option<(usize, usize, f64, f64)> = None;
        for a in 0..rels.len() {
            for b in a + 1..rels.len() {
                if rels[a].1 & rels[b].0.set == 0 {
                    continue;
                }
                let (rows, cost) = p.estimate(&rels[a].0, &rels[b].0);
                let better = pick.map_or(true, |(_, _, r, c)| rows < r || (rows == r && cost < c));
                if better {
                    pick = Some((a, b, rows, cost));
                }
            }
        }
        let (a, b, _, _) = pick.expect("a connected component has a linked pair");
        let r = p.join(&rels[a].0, &rels[b].0);
        let near = rels[a].1 | rels[b].1;
        rels.swap_remove(b);
        rels[a] = (r, near);
    }
    rels.pop().expect("one relation left").0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize, rows: f64, nd: f64) -> Problem {
        Problem {
            rows: vec![rows; n],
            clauses: vec![],
            classes: (1..n)
                .map(|i| Class {
                    members: vec![(i - 1, nd), (i, nd)],
                    constant: false,
                })
                .collect(),
        }
    }

    /// Whether every join of `t` has linked inputs.
    fn no_cross(p: &Problem, t: &Tree) -> bool {
        match t {
            Tree::Leaf(_) => true,
            Tree::Join(l, r) => {
                let adj = p.adjacency();
                let near = items_of(l.set()).fold(0, |s, i| s | adj[i]);
                near & r.set() != 0 && no_cross(p, l) && no_cross(p, r)
            }
        }
    }

    fn all_once(t: &Tree, n: usize) -> bool {
        let mut v = Vec::new();
        t.leaves(&mut v);
        v.sort_unstable();
        v == (0..n).collect::<Vec<_>>()
    }

    #[test]
    fn a_chain_is_joined_without_cross_products_by_both_searches() {
        for n in [2, 5, 11, 40, 64, 128] {
            let p = chain(n, 10.0, 10.0);
            for how in [
                Strategy {
                    geqo: true,
                    threshold: 12,
                },
                Strategy {
                    geqo: true,
                    threshold: 2,
                },
            ] {
                let t = search(&p, how);
                assert!(all_once(&t, n), "{n}: {t:?}");
                assert!(no_cross(&p, &t), "{n}: {t:?}");
            }
        }
    }

    #[test]
    fn the_from_order_of_a_small_chain_is_kept() {
        let p = chain(3, 10.0, 10.0);
        let t = search(
            &p,
            Strategy {
                geqo: true,
                threshold: 12,
            },
        );
        let want = Tree::Join(
            Box::new(Tree::Join(Box::new(Tree::Leaf(0)), Box::new(Tree::Leaf(1)))),
            Box::new(Tree::Leaf(2)),
        );
        assert_eq!(t, want);
    }

    #[test]
    fn the_filtered_end_of_a_chain_is_joined_first() {
        // 0 - 1 - 2 - 3, item 3 filtered to one row, keys unique.
        let mut p = chain(4, 1000.0, 1000.0);
        p.rows[3] = 1.0;
        for how in [
            Strategy {
                geqo: true,
                threshold: 12,
            },
            Strategy {
                geqo: true,
                threshold: 2,
            },
        ] {
            let t = search(&p, how);
            // The innermost join pairs 2 with 3.
            fn innermost(t: &Tree) -> Option<Set> {
                match t {
                    Tree::Leaf(_) => None,
                    Tree::Join(l, r) => innermost(l)
                        .or_else(|| innermost(r))
                        .or(Some(l.set() | r.set())),
                }
            }
            assert_eq!(innermost(&t), Some(bit(2) | bit(3)), "{t:?}");
        }
    }

    #[test]
    fn components_are_crossed_last_smallest_first() {
        // {0, 1} linked, {2} alone and small, {3, 4} linked and large.
        let p = Problem {
            rows: vec![10.0, 10.0, 2.0, 1000.0, 1000.0],
            clauses: vec![Clause {
                items: bit(3) | bit(4),
                sel: 0.001,
                hashable: true,
            }],
            classes: vec![Class {
                members: vec![(0, 10.0), (1, 10.0)],
                constant: false,
            }],
        };
        let t = search(
            &p,
            Strategy {
                geqo: true,
                threshold: 12,
            },
        );
        // (({0, 1} x {2}) x {3, 4}): the larger input left each time.
        let Tree::Join(l, r) = t else {
            panic!("a join")
        };
        assert_eq!(
            (l.set(), r.set()),
            (bit(3) | bit(4), bit(0) | bit(1) | bit(2))
        );
        let Tree::Join(rl, rr) = *r else {
            panic!("a join")
        };
        assert_eq!((rl.set(), rr.set()), (bit(0) | bit(1), bit(2)));
    }

    #[test]
    fn the_size_of_a_set_does_not_depend_on_the_order() {
        let p = chain(6, 10.0, 5.0);
        assert_eq!(p.rows_of(0b11), 20.0);
        assert_eq!(p.rows_of(0b111111), 10.0f64.powi(6) / 5.0f64.powi(5));
        let mut q = p.clone();
        q.classes[0].constant = true;
        assert_eq!(q.rows_of(0b11), 100.0);
    }
}
