import type { AccessTable } from '@seller-api/service-kit';

/** Who may call what on the dispatcher (docs/deploy.md, "Internal keys"): the gateway only. */
export const DISPATCHER_ACCESS: AccessTable = {
  gateway: [
    {
      roles: ['seller'],
      routes: [
        'POST /config/webhooks/',
        'GET /config/webhooks/',
        'GET /config/webhooks/health/',
        'GET /config/webhooks/:id/',
        'PATCH /config/webhooks/:id/',
        'DELETE /config/webhooks/:id/',
        'GET /config/webhooks/:id/deliveries/',
        'POST /config/webhooks/:id/deliveries/resend/',
        'POST /config/webhooks/:id/deliveries/:delivery_id/resend/',
        'GET /sellers/orders/:uuid/postback-deliveries/',
        'POST /sellers/orders/:uuid/postback-deliveries/:delivery_id/resend/',
        'GET /events/',
        'GET /events/:id/',
      ],
    },
  ],
};
