"""The console's pages, one router per area; each handler makes its Memory calls and renders."""
