//! The hub's web side: what a browser reaches, and who may reach it.
//!
//! | room | where it is decided |
//! |---|---|
//! | [`pages`] | the server-rendered Leptos pages, their server functions and static assets |
//! | [`bff`] | the `/api` a browser calls, and the views it gets (every one redacted, cut to the person's part) |
//! | [`ui_auth`] | who may use the canvas and what each may do: people and roles, login (a password, or a member's own identity provider) and its limits, sessions, CSRF, security headers |
//!
//! The one error shape of every `/api` route is [`crate::api`], below
//! this room: the hub's own edge calls answer in it too.

pub mod bff;
pub mod pages;
pub mod ui_auth;
