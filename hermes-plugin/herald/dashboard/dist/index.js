// Herald's dashboard plugin has no page: it only serves /api/plugins/herald/ for Herald.
