"""Where every knob of explorer comes from, in one place: the user's config file
(:mod:`~explorer.settings.user_config`), where indexes, the config and the state live
(:mod:`~explorer.settings.locations`), and the :class:`~explorer.settings.config.Settings` a
command or the TUI builds from flags, the environment and that file
(:mod:`~explorer.settings.config`). The core reads only what it is handed
(:class:`~explorer.core.settings.IndexSettings`); the front ends build it here."""
