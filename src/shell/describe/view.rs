//! `\dv [PATTERN]` and `\d[+] VIEW`: views as psql 15 lists and describes
//! them (`View "public.v"` over Column, Type, Collation, Nullable, Default,
//! with `+` also Storage and Description and the `View definition:`
//! footer). heapdb has one schema, `public`, and one owner, `heapdb`.

use super::super::print::{Align, ColumnInfo};
use super::super::run::{Flow, Runner};
use super::{glob_match, normalize_pattern};
use crate::session::ViewInfo;

impl Runner {
    /// The views matching `pattern` (all when `None`).
    pub(super) fn matching_views(&mut self, pattern: Option<&str>) -> Vec<ViewInfo> {
        let mut views = self.session.list_views();
        if let Some(p) = pattern {
            let p = normalize_pattern(p);
            views.retain(|v| glob_match(&p, &v.name));
        }
        views
    }

    /// `\d[+]` of each of `views`.
    pub(super) fn describe_views(&mut self, views: &[ViewInfo], plus: bool) {
        for v in views {
            let mut cols = vec![
                ColumnInfo::new("Column", Align::Left),
                ColumnInfo::new("Type", Align::Left),
                ColumnInfo::new("Collation", Align::Left),
                ColumnInfo::new("Nullable", Align::Left),
                ColumnInfo::new("Default", Align::Left),
            ];
            if plus {
                cols.push(ColumnInfo::new("Storage", Align::Left));
                cols.push(ColumnInfo::new("Description", Align::Left));
            }
            let rows: Vec<Vec<String>> = v
                .columns
                .iter()
                .zip(&v.storage)
                .map(|(c, storage)| {
                    let mut r = vec![
                        c.name.clone(),
                        c.type_name.clone(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ];
                    if plus {
                        r.push(storage.to_string());
                        r.push(c.description.clone().unwrap_or_default());
                    }
                    r
                })
                .collect();
            let footer = if plus {
                format!("View definition:\n {};\n", v.definition)
            } else {
                String::new()
            };
            self.print_titled(
                &format!("View \"public.{}\"", v.name),
                &cols,
                &rows,
                Some(&footer),
            );
        }
    }

    /// `\dv[+] [PATTERN]`: the views, as psql lists relations.
    pub(crate) fn list_views(&mut self, pattern: Option<&str>) -> Flow {
        let views = self.matching_views(pattern);
        if views.is_empty() {
            let msg = match pattern {
                Some(p) => format!("Did not find any relation named \"{p}\".\n"),
                None => "Did not find any relations.\n".to_string(),
            };
            self.eprint(&msg);
            return Flow::Continue;
        }
        let cols = [
            ColumnInfo::new("Schema", Align::Left),
            ColumnInfo::new("Name", Align::Left),
            ColumnInfo::new("Type", Align::Left),
            ColumnInfo::new("Owner", Align::Left),
        ];
        let rows: Vec<Vec<String>> = views
            .iter()
            .map(|v| {
                vec![
                    "public".to_string(),
                    v.name.clone(),
                    "view".to_string(),
                    "heapdb".to_string(),
                ]
            })
            .collect();
        self.print_titled("List of relations", &cols, &rows, None);
        Flow::Continue
    }
}
